"""Free and in-use TCP ports on the loopback interface."""

import socket

import psutil

from ground.errors import BrokerError

LOOPBACK = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


def ensure_free(port: int) -> None:
    """BrokerError when ``port`` is already taken on the loopback interface."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((LOOPBACK, port))
        except OSError as err:
            raise BrokerError(
                f"port {port} on {LOOPBACK} is in use; choose another with --port "
                "or omit it to pick a free one"
            ) from err


def listener_pid(port: int) -> int | None:
    """Pid of the local process listening on TCP ``port``, if it can be seen."""
    try:
        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port:
                return conn.pid
    except psutil.AccessDenied:
        pass
    return None
