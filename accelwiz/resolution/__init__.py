"""One resolved run: files + plan + flags + Trainer arguments -> the workload, the model, the launch."""
