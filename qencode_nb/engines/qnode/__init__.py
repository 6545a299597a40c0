"""PennyLane QNodes on the recorded device (engine ``"qnode"``): the QNode energy,
the QNode ADAPT engine's arithmetic and replay, the binding."""
