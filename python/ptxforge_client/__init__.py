"""ptxforge_client: the Python client of `ptxforge serve` (standard library only).

    from ptxforge_client import Client, reward
    c = Client("http://127.0.0.1:8765", token=None)
    view = c.run("level1/vector_add", ptx_text, device="cpu")
    r = reward(view["record"])   # None: no verdict, drop or re-run the sample

docs/serve.md describes the HTTP API, the client and the reward's shaping.
"""

from .client import RUN_OPTIONS, ApiError, Client, ClientError, ConnectionFailed, RunTimeout
from .reward import CORRECT, PENALTIES, SPEED_MAX, SPEED_MIN, SPEED_SLOPE, UNSUPPORTED, explain, reward

__version__ = "0.1.0"
__all__ = [
    "Client", "ClientError", "ApiError", "ConnectionFailed", "RunTimeout", "RUN_OPTIONS",
    "reward", "explain", "PENALTIES", "CORRECT", "SPEED_SLOPE", "SPEED_MIN", "SPEED_MAX", "UNSUPPORTED",
]
