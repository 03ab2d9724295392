"""The systemd units, checked by systemd-analyze: they load, and the service is hardened below exposure 2.0."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import HEATCURVED

UNITS = os.path.join(os.path.dirname(__file__), "..", "..", "systemd")


@pytest.fixture
def analyze():
    tool = shutil.which("systemd-analyze")
    if not tool:
        pytest.skip("systemd-analyze is not installed")
    return tool


def unit_copy(tmp_path, name):
    """The unit with ExecStart pointing at the built binary: verify wants it to exist."""
    with open(os.path.join(UNITS, name)) as f:
        text = f.read().replace("/usr/sbin/heatcurved", HEATCURVED)
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("name", ["heatcurved.service", "heatcurved.socket"])
def test_units_verify(analyze, heatcurved_bin, tmp_path, name):
    service = unit_copy(tmp_path, "heatcurved.service")
    path = unit_copy(tmp_path, name) if name != "heatcurved.service" else service
    r = subprocess.run([analyze, "verify", path], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_service_exposure_below_2(analyze, heatcurved_bin, tmp_path):
    r = subprocess.run([analyze, "security", "--offline=yes", unit_copy(tmp_path, "heatcurved.service")],
                       capture_output=True, text=True)
    m = re.search(r"Overall exposure level for heatcurved.service: ([0-9.]+)", r.stdout + r.stderr)
    assert m, r.stdout + r.stderr
    assert float(m.group(1)) < 2.0, r.stdout


def test_service_devices_are_the_gpio_chips_and_vcio_only():
    """PrivateDevices=yes hid the GPIO chips and /dev/vcio; their replacement must not open the rest of /dev."""
    with open(os.path.join(UNITS, "heatcurved.service")) as f:
        settings = [line.strip().split("=", 1) for line in f if re.match(r"(PrivateDevices|Device\w+)=", line)]
    assert ["DevicePolicy", "closed"] in settings, settings
    assert sorted(v for k, v in settings if k == "DeviceAllow") == ["/dev/vcio rw", "char-gpiochip rw"], settings
    with open(os.path.join(UNITS, "heatcurve.sysusers")) as f:
        assert {"m heatcurve gpio", "m heatcurve video"} <= {line.strip() for line in f}
