"""The seccomp filter of sandboxed commands: which sockets they may create.

A unix socket reaches any listener whose path the command can see (the Docker socket,
the D-Bus session bus, ssh and gpg agents), and bubblewrap's read-only ``/`` still lets
``connect`` through; seccomp cannot read the address a ``connect`` names, so the filter
decides at ``socket()``, by an allow-list of families: TCP/IP (the walls already refuse
its traffic: bubblewrap's empty network namespace, Landlock's TCP rules) and netlink's
routing family (programs ask it for their addresses). Every other family — ``AF_UNIX``
above all, also ``AF_PACKET``, ``AF_VSOCK`` (the hypervisor), … — is refused with
``EAFNOSUPPORT`` ("Address family not supported by protocol", which ``blocked_reason``
reads as the walls' doing). ``socketpair`` stays allowed for stream pairs (Python's asyncio and
multiprocessing use them): a stream pair reaches no one else, while a datagram one can
``sendto`` a path. ``io_uring`` is refused with ``ENOSYS``, so its users fall back to
plain calls (its operations create and connect sockets without the syscalls the filter
sees). Under Landlock, which cannot refuse UDP, only
stream TCP/IP sockets are allowed (no DNS or other UDP out).

The program is classic BPF, assembled here (stdlib only): bubblewrap takes it on a file
descriptor (``--seccomp FD``), the Landlock trampoline installs it itself.
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

LD_ABS_W = 0x20
JEQ_K = 0x15
JGE_K = 0x35
AND_K = 0x54
RET_K = 0x06

RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000

NR = 0  # offsets in struct seccomp_data
ARCH = 4
ARG0, ARG1, ARG2 = 16, 24, 32  # the low 32 bits of each (little-endian)

AF_UNIX = 1
AF_INET = 2
AF_INET6 = 10
AF_NETLINK = 16
NETLINK_ROUTE = 0
SOCK_STREAM = 1
SOCK_TYPE_MASK = 0xF  # the type without SOCK_NONBLOCK / SOCK_CLOEXEC
X32_BIT = 0x40000000


@dataclass(frozen=True, slots=True)
class Arch:
    """One kernel ABI: its audit number and the syscalls the filter looks at."""

    audit: int
    socket: int
    socketpair: int
    io_uring: tuple[int, ...] = (425, 426, 427)
    socketcall: int | None = None
    """The multiplexed socket call of 32-bit x86 (its arguments are in memory)."""


X86_64 = Arch(0xC000003E, socket=41, socketpair=53)
I386 = Arch(0x40000003, socket=359, socketpair=360, socketcall=102)
AARCH64 = Arch(0xC00000B7, socket=198, socketpair=199)
ARM = Arch(0x40000028, socket=281, socketpair=288)

NATIVE = {"x86_64": (X86_64, I386), "aarch64": (AARCH64, ARM), "arm64": (AARCH64, ARM)}
"""Per machine: its own ABI, and the 32-bit one its processes may also call."""


class _Program:
    """Instructions with symbolic jump targets, resolved by ``assemble``."""

    def __init__(self) -> None:
        self.code: list[tuple[int, str | int, str | int, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def load(self, offset: int) -> None:
        self.code.append((LD_ABS_W, 0, 0, offset))

    def mask(self, bits: int) -> None:
        self.code.append((AND_K, 0, 0, bits))

    def jump(self, op: int, value: int, yes: str, no: str | int = 0) -> None:
        """Go to ``yes`` when ``A op value``, else to ``no`` (0: the next instruction)."""
        self.code.append((op, yes, no, value))

    def ret(self, value: int) -> None:
        self.code.append((RET_K, 0, 0, value))

    def assemble(self) -> bytes:
        out = bytearray()
        for at, (op, yes, no, k) in enumerate(self.code):
            jt = self._offset(at, yes) if op in (JEQ_K, JGE_K) else 0
            jf = self._offset(at, no) if op in (JEQ_K, JGE_K) else 0
            out += struct.pack("=HBBI", op, jt, jf, k)
        return bytes(out)

    def _offset(self, at: int, target: str | int) -> int:
        if isinstance(target, int):
            return target
        offset = self.labels[target] - at - 1
        if not 0 <= offset <= 255:
            raise ValueError(f"jump to {target} out of reach")
        return offset


def _socket_rules(p: _Program, arch: Arch, udp: bool) -> None:
    """After ``A = nr`` of ``arch``: allow-list socket families; refuse io_uring."""
    tag = f"{arch.audit:x}"
    p.jump(JEQ_K, arch.socket, f"socket-{tag}")
    p.jump(JEQ_K, arch.socketpair, f"pair-{tag}")
    for nr in arch.io_uring:
        p.jump(JEQ_K, nr, "nosys")
    p.ret(RET_ALLOW)
    p.label(f"socket-{tag}")
    p.load(ARG0)
    p.jump(JEQ_K, AF_INET, f"inet-{tag}")
    p.jump(JEQ_K, AF_INET6, f"inet-{tag}")
    p.jump(JEQ_K, AF_NETLINK, f"netlink-{tag}", "nosock")
    p.label(f"inet-{tag}")
    if udp:
        p.ret(RET_ALLOW)
    else:
        p.load(ARG1)
        p.mask(SOCK_TYPE_MASK)
        p.jump(JEQ_K, SOCK_STREAM, "allow", "nosock")
    p.label(f"netlink-{tag}")
    p.load(ARG2)
    p.jump(JEQ_K, NETLINK_ROUTE, "allow", "nosock")
    p.label(f"pair-{tag}")
    p.load(ARG1)
    p.mask(SOCK_TYPE_MASK)
    p.jump(JEQ_K, SOCK_STREAM, "allow", "nosock")


def socket_filter(*, udp: bool, machine: str | None = None) -> bytes:
    """The filter for this machine (``platform.machine()``): a ``struct sock_filter``
    array. ``udp``: whether TCP/IP datagram and raw sockets are allowed too (only where a
    network namespace of its own already keeps them in). ``ValueError`` for a machine
    this filter does not know (the sandbox then does not start: it fails closed)."""
    name = (machine or platform.machine()).lower()
    if name not in NATIVE:
        raise ValueError(f"no seccomp filter for machine {name!r}")
    native, compat = NATIVE[name]
    p = _Program()
    p.load(ARCH)
    p.jump(JEQ_K, native.audit, "native")
    p.jump(JEQ_K, compat.audit, "compat", "nosys")
    p.label("native")
    p.load(NR)
    if native is X86_64:
        p.jump(JGE_K, X32_BIT, "nosys")  # the x32 ABI: same numbers, another table
    _socket_rules(p, native, udp)
    p.label("compat")
    # 32-bit callers: no sockets at all (socketcall's arguments cannot be read).
    p.load(NR)
    if compat.socketcall is not None:
        p.jump(JEQ_K, compat.socketcall, "nosock")
    p.jump(JEQ_K, compat.socket, "nosock")
    p.jump(JEQ_K, compat.socketpair, "nosock")
    for nr in compat.io_uring:
        p.jump(JEQ_K, nr, "nosys")
    p.label("allow")
    p.ret(RET_ALLOW)
    p.label("nosock")
    p.ret(RET_ERRNO | errno.EAFNOSUPPORT)
    p.label("nosys")
    p.ret(RET_ERRNO | errno.ENOSYS)
    return p.assemble()
