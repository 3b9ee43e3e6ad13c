"""A camera only stands in for a shoe (its driver's capabilities: `fallback`), and sources are in
priority order: a configuration whose first source is the camera, the camera alone or ahead of the
shoe, would have the camera deal while the shoe is healthy. `shoed config check`, and the daemon at
start, refuse it in one line (exit 2); the camera listed after the shoe is the configuration the
docs give."""

from __future__ import annotations

import pytest

from shoed.daemon.config import ConfigError, check, config_from_dict
from tests.conftest import run_shoed

CAMERA = {"driver": "camera", "url": "/dev/shoe-camera", "roi": [440, 160, 400, 400]}
SHOE = {"driver": "native", "url": "/dev/shoe-native"}
REFUSED = ("source 1 (camera) only stands in for a shoe that fails (a fallback reader): list the shoe's source "
           "before it, as sources are in priority order")


@pytest.mark.parametrize("sources", [[CAMERA], [CAMERA, SHOE], [CAMERA, dict(CAMERA, url="0"), SHOE]])
def test_a_camera_first_in_priority_is_refused_in_one_line(sources):
    with pytest.raises(ConfigError) as caught:
        check(config_from_dict({"sources": sources}, "shoed.toml"))
    assert str(caught.value) == REFUSED


def test_the_camera_after_the_shoe_stands_in_for_it():
    check(config_from_dict({"sources": [SHOE, CAMERA]}, "shoed.toml"))
    from shoed.drivers import capabilities

    assert capabilities("camera").fallback and not capabilities("native").fallback


def test_config_check_and_the_daemon_refuse_the_camera_alone_with_exit_2(tmp_path):
    config = tmp_path / "shoed.toml"
    config.write_text('[[sources]]\ndriver = "camera"\nurl = "/dev/shoe-camera"\n')
    proc = run_shoed("config", "check", str(config))
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"shoed: {REFUSED}\n")
    proc = run_shoed("run", "--config", str(config), "--journal", str(tmp_path / "journal"),
                     "--keys", str(tmp_path / "keys"))
    assert (proc.returncode, proc.stderr.splitlines()[-1:]) == (2, [f"shoed: {REFUSED}"])
    assert not (tmp_path / "journal").exists() and not (tmp_path / "keys").exists()
