"""surge from Python: drive a running surge over its control socket, several
instances as one, and read results files (docs/python.md).

    import surge
    c = surge.connect("/tmp/surge.sock")     # surge run --control /tmp/surge.sock SCRIPT
    c.eval("surge.ports()")                  # -> 1
"""
from .client import Client, ConnectionClosed, Lua, SurgeError, Task, connect, lua_literal
from .fleet import Fleet, FleetError, Instance, start_local
from .results import Histogram, Results, ResultsError, load, merge

__all__ = ["Client", "ConnectionClosed", "Lua", "SurgeError", "Task", "connect", "lua_literal", "Fleet",
           "FleetError", "Instance", "merge", "start_local", "Histogram", "Results", "ResultsError", "load"]
__version__ = "0.1.0"
