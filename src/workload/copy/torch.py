# The copy in torch: the strided view made dense.


def compute(x, gamma, eps):
    return x.clone(memory_format=__import__("torch").contiguous_format)


EXTRA = {}
