"""The large dataclasses take their fields by name (core/by_name.py) as a generated __init__ would:
the same values and defaults, a fresh default list per instance, a TypeError naming an unknown or a
missing field, and a frozen one still refusing assignment; and the written __eq__, __hash__ and
__repr__ (FieldValues, compared_by_value, Frozen) behave as the generated ones."""
import dataclasses
import inspect

import pytest

from designer.core.by_name import NEW, FieldsByName, FieldValues, Frozen, compared_by_value
from designer.core.model import Parallelism, Workload
from designer.core.model.catalog import Accelerator, default_catalog
from designer.core.model.document import ClusterSpec


@dataclasses.dataclass(frozen=True)
class Generated:
    name: str
    count: int = 2
    tags: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True, init=False)
class ByName:
    name: str
    count: int = 2
    tags: list = dataclasses.field(default_factory=list)

    def __init__(self, **values):
        _BY_NAME.set(self, values)


_BY_NAME = FieldsByName(ByName)


@pytest.mark.parametrize("values", [{"name": "a"}, {"name": "a", "count": 5}, {"name": "a", "tags": [1]},
                                    {"count": 3, "tags": [], "name": "b"}])
def test_a_class_by_name_has_the_fields_a_generated_init_gives(values):
    made, generated = ByName(**values), Generated(**values)
    assert dataclasses.asdict(made) == dataclasses.asdict(generated)
    assert dataclasses.replace(made, count=9).count == 9 and made == ByName(**values)


@pytest.mark.parametrize("cls", [ByName, Generated])
def test_an_unknown_or_missing_field_is_a_type_error_naming_it(cls):
    with pytest.raises(TypeError, match="'colour'"):
        cls(name="a", colour="red")
    with pytest.raises(TypeError, match="'name'"):
        cls(count=1)


def test_a_frozen_class_by_name_refuses_assignment_and_its_defaults_are_its_own():
    one, two = ByName(name="a"), ByName(name="a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.count = 3
    one.tags.append("x")
    assert two.tags == []


def test_the_models_classes_take_their_fields_by_name():
    spec, other = ClusterSpec(), ClusterSpec()
    spec.links.append("a cable")
    assert other.links == [] and other.calibration == {} and other.workload is None
    with pytest.raises(TypeError, match="'num_layer'"):
        Workload(num_layer=32)
    parallelism = Parallelism(tensor_model_parallel_size=4)
    assert parallelism == dataclasses.replace(Parallelism(), tensor_model_parallel_size=4)
    h100 = default_catalog().accelerator("H100")
    assert Accelerator(**{f.name: getattr(h100, f.name) for f in dataclasses.fields(h100)}).name == h100.name
    with pytest.raises(TypeError, match="'name'"):
        Accelerator(**{f.name: getattr(h100, f.name) for f in dataclasses.fields(h100) if f.name != "name"})


@dataclasses.dataclass
class GeneratedValue:
    name: str
    count: float = 2
    note: str = dataclasses.field(default="", compare=False, repr=False)


@compared_by_value
@dataclasses.dataclass(eq=False, repr=False)
class WrittenValue:
    name: str
    count: float = 2
    note: str = dataclasses.field(default="", compare=False, repr=False)


@dataclasses.dataclass(frozen=True)
class GeneratedFrozen:
    name: str
    count: float = 2


@dataclasses.dataclass(init=False, eq=False)
class WrittenFrozen(Frozen):
    name: str
    count: float = 2

    def __init__(self, name: str, count: float = 2) -> None:
        vars(self).update(name=name, count=count)

    def __eq__(self, other):
        return _WRITTEN_FROZEN.equal(self, other)

    def __hash__(self):
        return _WRITTEN_FROZEN.hash(self)


_WRITTEN_FROZEN = FieldValues(WrittenFrozen)
PAIRS = [(("a",), ("a",)), (("a", 3), ("a", 3.0)), (("a", 3), ("b", 3)), (("a", float("nan")), ("a", float("nan"))),
         (("a", 1, "x"), ("a", 1, "y"))]


@pytest.mark.parametrize("one, other", PAIRS)
def test_written_methods_compare_and_show_as_the_generated_ones(one, other):
    assert repr(WrittenValue(*one)) == repr(GeneratedValue(*one)).replace("GeneratedValue", "WrittenValue")
    assert (WrittenValue(*one) == WrittenValue(*other)) == (GeneratedValue(*one) == GeneratedValue(*other))
    frozen = one[:2]
    assert hash(WrittenFrozen(*frozen)) == hash(GeneratedFrozen(*frozen))
    assert (WrittenFrozen(*frozen) == WrittenFrozen(*other[:2])) == \
        (GeneratedFrozen(*frozen) == GeneratedFrozen(*other[:2]))


def test_written_methods_keep_what_generated_ones_refuse():
    with pytest.raises(TypeError, match="unhashable"):
        hash(WrittenValue("a"))
    assert WrittenValue("a") != GeneratedValue("a") and WrittenFrozen("a") != GeneratedFrozen("a")
    made = WrittenFrozen("a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.count = 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        del made.name
    assert dataclasses.replace(made, count=5) == WrittenFrozen("a", 5)


def _core_dataclasses_with_written_init():
    """Every dataclass of designer.core declared init=False whose class writes a positional __init__."""
    import importlib
    import pkgutil

    import designer.core as core
    found = {}
    for module in pkgutil.walk_packages(core.__path__, core.__name__ + "."):
        for value in vars(importlib.import_module(module.name)).values():
            # (declared a dataclass itself, not a plain subclass of one with an __init__ of its own)
            if (isinstance(value, type) and "__dataclass_params__" in vars(value) and value.__module__ == module.name
                    and not value.__dataclass_params__.init and "__init__" in vars(value)):
                params = inspect.signature(value.__init__).parameters.values()
                if not any(p.kind is p.VAR_KEYWORD for p in params):  # (by name: FieldsByName reads the fields)
                    found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


WRITTEN_INIT = _core_dataclasses_with_written_init()


def test_the_core_has_written_inits_to_check():
    assert {"designer.core.model.elements.Node", "designer.core.model.elements.Link",
            "designer.core.model.plan.ResolvedPlan"} <= WRITTEN_INIT.keys()


@pytest.mark.parametrize("name", sorted(WRITTEN_INIT))
def test_a_written_init_takes_the_fields_in_order_with_their_defaults(name):
    """A written positional __init__ stands for the generated one: its parameters are the class's init
    fields in declaration order, each with the field's default (NEW for a default factory), so a default
    changed in the field and not in the __init__ (or the reverse) fails here."""
    cls = WRITTEN_INIT[name]
    declared = [f for f in dataclasses.fields(cls) if f.init]
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    assert [p.name for p in params] == [f.name for f in declared]
    for param, field in zip(params, declared):
        if field.default is not dataclasses.MISSING:
            expected = field.default
        elif field.default_factory is not dataclasses.MISSING:
            expected = NEW
        else:
            expected = inspect.Parameter.empty
        assert param.default is expected or param.default == expected, (field.name, param.default, expected)
