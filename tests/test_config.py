import pytest

from mosaic.config import Config


def test_toml_overrides_flat_and_grouped_keys(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('significant_bytes = 5e7\n[metadata]\nmetadata_high_spike = 300\n')
    cfg = Config.from_toml(path)
    assert cfg.significant_bytes == 5e7
    assert cfg.metadata_high_spike == 300
    assert cfg.steady_cv == 0.25
    assert cfg.hash() != Config().hash()


def test_unknown_key_is_an_error(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("signifcant_bytes = 1\n")
    with pytest.raises(ValueError, match="signifcant_bytes"):
        Config.from_toml(path)


def test_lists_become_tuples_so_config_stays_hashable(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('mounts = ["/scratch"]\n')
    cfg = Config.from_toml(path)
    assert cfg.mounts == ("/scratch",)
    assert hash(cfg)


def test_execution_settings_do_not_change_the_results_hash():
    assert Config(batch_size=7, dispy_port=9800).hash() == Config().hash()
    assert Config(significant_bytes=2e8).hash() != Config().hash()
