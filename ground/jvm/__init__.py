"""The JVM side: a Java 17+ runtime (:mod:`.java`), Maven artifacts through PySpark's Ivy
(:mod:`.ivy`), the Spark session with Kafka's connector (:mod:`.spark`) and JVM heap
readings (:mod:`.heap`)."""
