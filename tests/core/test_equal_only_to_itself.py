"""A dataclass that holds numpy arrays is equal only to itself (eq=False): the generated __eq__ and
__hash__ would compare or hash its arrays in a tuple of its fields, which raises (an array has no
single truth value and no hash), and Python compiles each generated method as the class is made, at
the start of every command that imports it."""
import dataclasses
import importlib
import pkgutil

import designer.core


def core_dataclasses():
    for info in pkgutil.walk_packages(designer.core.__path__, "designer.core."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == info.name:
                yield value


def test_a_dataclass_with_arrays_is_equal_only_to_itself():
    holding_arrays = {cls.__qualname__: cls for cls in core_dataclasses()
                      if any("ndarray" in str(f.type) for f in dataclasses.fields(cls))}
    assert {"Evaluation", "Endpoints", "Fabric"} <= set(holding_arrays)
    compared_by_value = sorted(name for name, cls in holding_arrays.items() if cls.__dataclass_params__.eq)
    assert compared_by_value == []
