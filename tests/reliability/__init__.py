"""Reliability: the real daemon under line noise, unplugs, kill -9, a damaged or full journal, abuse of the
command endpoint, fuzzing and soak. SHOED_SOAK=1 runs the long versions."""
