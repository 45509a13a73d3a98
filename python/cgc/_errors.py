"""The package's exceptions."""


class Error(Exception):
    """Every error this package raises on its own."""


class BuildError(Error):
    """cgc, nvcc or the toolchain's discovery failed; the message holds the
    command and what it printed."""


class BindError(Error, ValueError):
    """An argument for a buffer or scalar does not fit its declaration (or
    names none): the message names the graph, the buffer or scalar, what
    was expected and what was given."""


class BindTypeError(BindError, TypeError):
    """A BindError about a type: a dtype other than the buffer's, an object
    that is no array, a value a scalar's type cannot hold."""


class CgrtError(Error, RuntimeError):
    """The runtime refused or failed: `status` is its cgrt_status
    (CGRT_ERROR_CUDA 1, CGRT_ERROR_INVALID 2, CGRT_ERROR_NO_MEMORY 3) and
    the message is cgrt_last_error()'s text, which names the .cgraph
    position, graph or node and CUDA's error."""

    def __init__(self, message, status):
        super().__init__(message)
        self.status = status
