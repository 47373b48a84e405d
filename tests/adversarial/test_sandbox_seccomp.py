"""The seccomp filter as a program: it assembles for every machine it knows, refuses to
guess for one it does not (the sandbox then fails closed), and its jumps land inside it."""

from __future__ import annotations

import struct

import pytest

from tether.sandbox import seccomp


@pytest.mark.parametrize("machine", sorted(seccomp.NATIVE))
@pytest.mark.parametrize("udp", [True, False])
def test_the_filter_is_a_whole_program_for_every_known_machine(machine: str, udp: bool) -> None:
    program = seccomp.socket_filter(udp=udp, machine=machine)
    assert len(program) % 8 == 0
    code = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    for at, (op, jt, jf, _) in enumerate(code):
        if op in (seccomp.JEQ_K, seccomp.JGE_K):
            assert at + 1 + max(jt, jf) < len(code)  # every jump lands on an instruction
    assert code[-1][0] == seccomp.RET_K and code[-2][0] == seccomp.RET_K


def test_an_unknown_machine_gets_no_filter_and_so_no_sandbox() -> None:
    with pytest.raises(ValueError, match="no seccomp filter"):
        seccomp.socket_filter(udp=True, machine="riscv64")
