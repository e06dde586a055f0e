"""What each analysis step reads of the Config: its signature says it, and its Settings
are exactly Config fields, copied from the Config it runs with."""

import dataclasses
import inspect
import typing

import pytest

from mosaic import signature
from mosaic.analysis import (
    bursts,
    meanshift,
    merging,
    metadata,
    segments,
    spectrum,
    steps,
    temporality,
    verdict,
)
from mosaic.config import Config, Settings

STEPS = (bursts, merging, meanshift, metadata, segments, spectrum, steps, temporality, verdict)
BUNDLES = (
    segments.MeanShiftSettings,
    spectrum.SamplingSettings,
    spectrum.SpectrumSettings,
    temporality.TemporalitySettings,
    verdict.VerdictSettings,
    verdict.LabelSettings,
    signature.SignatureSettings,
)


def test_every_settings_class_is_listed():
    assert set(Settings.__subclasses__()) == set(BUNDLES)


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda bundle: bundle.__name__)
def test_a_settings_class_is_more_than_three_config_fields_of_the_same_type(bundle):
    """Fewer fields are keyword arguments; a field named as in Config, typed as there."""
    config_types = typing.get_type_hints(Config)
    own_types = typing.get_type_hints(bundle)
    assert len(own_types) > 3
    assert own_types == {name: config_types[name] for name in own_types}


def test_of_copies_the_fields_from_the_config():
    config = Config(
        verdict_rule="both",
        verdict_fft_min_score=0.7,
        verdict_fft_min_significance=6.0,
        verdict_fft_strong_min_significance=4.0,
        fft_min_score=0.2,
    )
    assert verdict.VerdictSettings.of(config) == verdict.VerdictSettings(
        verdict_rule="both",
        verdict_fft_min_score=0.7,
        verdict_fft_min_significance=6.0,
        verdict_fft_strong_min_significance=4.0,
        fft_min_score=0.2,
    )


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda bundle: bundle.__name__)
def test_settings_are_frozen(bundle):
    settings = bundle.of(Config())
    name = dataclasses.fields(bundle)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(settings, name, getattr(settings, name))


def step_functions():
    for module in STEPS:
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ == module.__name__:
                yield f"{module.__name__}.{name}", function


@pytest.mark.parametrize("name, function", list(step_functions()), ids=lambda item: str(item))
def test_no_step_takes_the_whole_config(name, function):
    """Config is the front end (analyze, categorize_trace, result, the reasons); a step
    names the fields it reads, or takes its Settings."""
    annotations = [parameter.annotation for parameter in inspect.signature(function).parameters.values()]
    assert not [a for a in annotations if "Config" in str(a)], name
