"""The generator's sparse statevector ADAPT engine (engine ``"statevector"``): its CSR
arithmetic, its ADAPT backend and replay, the binding."""
