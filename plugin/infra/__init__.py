"""What the pipeline stands on: transport (the only network I/O), shared state, cooldowns, logs, metrics."""
