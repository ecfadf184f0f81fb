"""mbsim.py: the Python package mbsim (python/mbsim/ of the checkout, or where `make install`
put it), for the tools beside this file that import it by this path: importing this module
imports the package in its place (docs/library.md)."""
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.realpath(__file__))
for _dir in (os.path.join(_here, "..", "python"), os.path.join(_here, "..", "share", "mbsim-run",
                                                               "python")):
    _init = os.path.join(_dir, "mbsim", "__init__.py")
    if os.path.isfile(_init):
        break
else:
    raise ImportError("the mbsim package is not beside %s (python/mbsim/)" % _here)
_spec = importlib.util.spec_from_file_location(
    "mbsim", _init, submodule_search_locations=[os.path.dirname(_init)])
_module = importlib.util.module_from_spec(_spec)
sys.modules["mbsim"] = _module
_spec.loader.exec_module(_module)
