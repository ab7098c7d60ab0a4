"""The app on another host, in this terminal: the OpenSSH client with a pty (``ssh -t``).

``BatchMode=yes`` turns off every prompt (password, passphrase, "are you sure you want to continue"), and
``StrictHostKeyChecking=yes`` refuses a host whose key is not in known_hosts or has changed. ssh reads the
``~/.ssh`` of the passwd entry and asyncssh that of ``$HOME``; when they differ, ssh is pointed at
``$HOME``'s config and known_hosts so that both check the host against the same files.
"""

from __future__ import annotations

import os
import pwd

from sessionview.remote.address import Address
from sessionview.remote.writes import command_line


def same_files_as_asyncssh() -> list[str]:
    home = os.path.expanduser("~")
    try:
        if os.path.realpath(pwd.getpwuid(os.getuid()).pw_dir) == os.path.realpath(home):
            return []
    except KeyError:
        pass
    out = []
    config = os.path.join(home, ".ssh", "config")
    if os.path.exists(config):
        out += ["-F", config]
    return [*out, "-o", f"UserKnownHostsFile={os.path.join(home, '.ssh', 'known_hosts')}"]


def ssh_argv(address: Address, remote_command: str, ssh: str = "ssh") -> list[str]:
    """The ssh command line that runs ``remote_command`` (already quoted) on the host in this terminal."""
    argv = [ssh, "-t", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", *same_files_as_asyncssh()]
    if address.port:
        argv += ["-p", str(address.port)]
    if address.user:
        argv += ["-l", address.user]
    return [*argv, address.host, "--", remote_command]


def app_argv(address: Address, path: str, read_only: bool, ssh: str = "ssh") -> list[str]:
    """``ssh -t HOST sessionview PATH [--read-only]``."""
    return ssh_argv(address, command_line([path or "."] + (["--read-only"] if read_only else [])), ssh)
