"""The sector engine (engine ``"sector"``): the (N_alpha, N_beta) determinant space
(``space``), excitation generators (``generators``), numba loops (``kernels``), which
entries map and how (``mapping``), its ADAPT backend and the binding."""
