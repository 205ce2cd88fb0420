

def test_a_spark_failure_says_what_to_change_not_a_java_trace() -> None:
    from pipeline.lake.spark import failure_message

    trace = ("An error occurred while calling o812.parquet.\n"
             ": org.apache.spark.memory.SparkOutOfMemoryError: [UNABLE_TO_ACQUIRE_MEMORY] "
             "Unable to acquire 65536 bytes of memory, got 0.\n"
             "\tat org.apache.spark.memory.MemoryConsumer.throwOom(MemoryConsumer.java:157)\n")
    message = failure_message("assignments", RuntimeError(trace), "local[2]", "1g")
    assert "ran out of memory in step 'assignments'" in message
    assert "--driver-memory" in message and "local[2]" in message and "1g" in message
    assert "the lake is unchanged" in message
    assert "\tat " not in message and "MemoryConsumer" not in message
    other = failure_message("write seats", RuntimeError(
        "An error occurred\n: org.apache.spark.SparkException: Job aborted.\n\tat x.y(Z.java:1)"),
        "spark://head:7077", "1g")
    assert "Spark failed in step 'write seats'" in other and "SparkException" in other
    assert "\tat " not in other
