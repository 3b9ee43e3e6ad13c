"""Tests of shoed.net: real ZeroMQ sockets on loopback."""
