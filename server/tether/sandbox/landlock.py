"""Landlock through ``ctypes``: what the kernel offers, and restricting oneself.

Landlock (Linux ≥ 5.13) lets an unprivileged process give up access for itself and what it
starts: files outside an allow-list (ABI 1), TCP bind and connect (ABI 4), signals and
abstract unix sockets to processes outside the sandbox (ABI 6). A restriction can never be
lifted, so it must never be applied in the server: the trampoline (``trampoline.py``)
applies it in the child it forks, just before that child ``exec``s the command.

Standard library only, and imports nothing of Tether: the trampoline imports it while
running isolated (``-I -S``), before anything of the command is loaded.
"""

from __future__ import annotations

import ctypes
import os
import stat
import sys

SYS_CREATE_RULESET = 444  # the same number on every architecture (generic syscall table)
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

NETWORK_ABI = 4
"""The first ABI that can refuse TCP connect and bind."""
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
"""The rights that mean something on a file (the others apply to folders only)."""
EXIT_SANDBOX_FAILED = 126
"""The trampoline's exit status when it could not wall the command in (nothing was run)."""
FAILED_PREFIX = "tether-sandbox: "


def fs_rights(abi: int) -> int:
    """Every filesystem right the kernel of this ABI knows (all of them are handled)."""
    rights = (1 << 13) - 1  # ABI 1: execute … make_sym
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


def read_rights(abi: int) -> int:
    """Reading and running files, listing folders."""
    return (FS_EXECUTE | FS_READ_FILE | FS_READ_DIR | FS_IOCTL_DEV) & fs_rights(abi)


def device_rights(abi: int) -> int:
    """Reading and writing a device such as ``/dev/null`` (``> /dev/null`` truncates)."""
    return (FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV) & fs_rights(abi)


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed: 12 bytes
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI; 0 when Landlock is absent or turned off."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = _libc()
        version = libc.syscall(
            ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0), CREATE_RULESET_VERSION
        )
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def restrict_self(abi: int, rules: list[tuple[str, str]], network: bool) -> None:
    """Restrict this process for good: only ``rules``' paths, no TCP unless ``network``.

    A rule is ``(path, kind)``, ``kind`` one of ``read``, ``write`` (every right) or
    ``device`` (read and write a device file). A path that does not exist is skipped: a
    grant missing is safe. Raises ``OSError`` when the kernel refuses.
    """
    libc = _libc()
    handled_fs = fs_rights(abi)
    attr = _RulesetAttr(handled_access_fs=handled_fs)
    size = 8  # the struct grew with each ABI; give the size this kernel knows
    if abi >= NETWORK_ABI:
        size = 16
        if not network:
            attr.handled_access_net = NET_BIND_TCP | NET_CONNECT_TCP
    if abi >= 6:
        size = 24
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
    ruleset = _check(
        libc.syscall(
            ctypes.c_long(SYS_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size), 0
        ),
        "landlock_create_ruleset",
    )
    kinds = {"read": read_rights(abi), "write": handled_fs, "device": device_rights(abi)}
    try:
        for path, kind in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                allowed = kinds[kind]
                if not stat.S_ISDIR(os.fstat(fd).st_mode):
                    allowed &= FILE_RIGHTS
                beneath = _PathBeneathAttr(allowed_access=allowed, parent_fd=fd)
                _check(
                    libc.syscall(
                        ctypes.c_long(SYS_ADD_RULE),
                        ruleset,
                        RULE_PATH_BENEATH,
                        ctypes.byref(beneath),
                        0,
                    ),
                    f"landlock_add_rule {path}",
                )
            finally:
                os.close(fd)
        _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(NO_NEW_PRIVS)")
        _check(libc.syscall(ctypes.c_long(SYS_RESTRICT_SELF), ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)
