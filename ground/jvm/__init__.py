"""The JVM side: a Java 17+ runtime (:mod:`.java`), pinned jars from Maven Central
(:mod:`.maven`) and JVM heap readings (:mod:`.heap`). Spark's jars, and how they are found
and resolved, are the Spark engine's (:mod:`engines.spark`)."""
