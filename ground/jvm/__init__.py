"""The JVM side: a Java 17+ runtime (:mod:`.java`), Maven artifacts through PySpark's Ivy
(:mod:`.ivy`), the jars PySpark ships (:mod:`.pyspark_jars`) and JVM heap readings
(:mod:`.heap`). The Spark session is the Spark engine's (:mod:`engines.spark.session`)."""
