"""Backends: ONNX Runtime (sessions, measurement, profiling) and the LP/MILP solvers."""
