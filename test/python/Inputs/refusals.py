"""What the mha.torch tests share: a call that must raise."""


def refusal(name, call):
    """Prints the exception that `call` raises (NotImplementedError,
    ValueError or TypeError) under `name` and returns 0; 1 if it raises
    none."""
    try:
        call()
        print("%s: no exception: FAILED" % name)
        return 1
    except (NotImplementedError, ValueError, TypeError) as error:
        print("%s: %s: %s" % (name, type(error).__name__, error))
        return 0
