"""stub"""
def from_v1(raw, path): raise NotImplementedError
def from_v2(raw, path): raise NotImplementedError
