"""Start-up checks: settings the unit's sandbox defeats are logged with the drop-in that fixes them."""
import os
import shutil
import subprocess

import pytest

from conftest import free_port


def run_briefly(binary, *args, env=None, wrap=(), seconds=2):
    """heatcurved for a moment; its log (it is SIGTERMed by timeout)."""
    full_env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "JOURNAL_STREAM",
                                                               "INVOCATION_ID")}
    full_env.update(env or {})
    r = subprocess.run([*wrap, "timeout", str(seconds), binary, "--simulate", *args],
                       capture_output=True, text=True, env=full_env, timeout=30)
    return r.stdout + r.stderr


def test_read_only_stress_dir_names_read_write_paths(heatcurved_bin, tmp_path):
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or not unshare:
        pytest.skip("needs root and unshare for a private read-only bind mount")
    ro = tmp_path / "ro"
    ro.mkdir()
    conf = tmp_path / "c.conf"
    conf.write_text(f"[runs]\nstress_dir = {ro}\n")
    args = ["--config", str(conf), "--state-dir", str(tmp_path / "s"), "--listen", f"127.0.0.1:{free_port()}"]
    # Writable: nothing said.
    assert "stress_dir" not in run_briefly(heatcurved_bin, *args)
    # Read-only, as ProtectSystem=strict makes it: the fix is named.
    script = f'mount --bind "{ro}" "{ro}" && mount -o remount,bind,ro "{ro}" && exec "$@"'
    log = run_briefly(heatcurved_bin, *args,
                      wrap=(unshare, "--mount", "--propagation", "private", "sh", "-c", script, "sh"))
    assert f"ReadWritePaths={ro}" in log, log
    assert "Listening on" in log, log       # a warning, not a failed start


@pytest.mark.slow       # three daemons run for 2 s each
def test_lan_listen_under_systemd_names_ip_address_allow(heatcurved_bin, tmp_path):
    port = free_port()
    state = ["--state-dir", str(tmp_path / "s")]
    under_systemd = {"INVOCATION_ID": "0123456789abcdef0123456789abcdef"}
    log = run_briefly(heatcurved_bin, *state, "--listen", f":{port}", env=under_systemd)
    assert "IPAddressAllow=" in log and f"*:{port}" in log, log
    # Loopback under systemd, or any address outside systemd: nothing to say.
    assert "IPAddressAllow=" not in run_briefly(heatcurved_bin, *state, "--listen", f"127.0.0.1:{port}",
                                                env=under_systemd)
    assert "IPAddressAllow=" not in run_briefly(heatcurved_bin, *state, "--listen", f":{port}")
