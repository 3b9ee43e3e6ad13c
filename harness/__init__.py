"""The test and benchmark harness: the real daemon, the virtual shoe and a display in their own
processes (`processes`), and readers of what they leave (`records`). Tests and benchmarks
both import it; the product does not."""
