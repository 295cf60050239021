"""jsonio.py: one reader for every JSON file, and writes that never replace a special file."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from dagmath_viz import jsonio
from dagmath_viz.schema import InputError

DEEP = b"[" * 3000 + b"]" * 3000


def test_bom_is_skipped_and_errors_are_located(tmp_path: Path) -> None:
    assert jsonio.parse(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}
    with pytest.raises(InputError, match=r"^line 2, column 5: invalid JSON \(unexpected"):
        jsonio.parse(b'{"a":\n  1 2}')
    with pytest.raises(InputError, match=r"^line 1, column 1026: .*depth limit exceeded"):
        jsonio.parse(DEEP)  # orjson's limit is 1,024 levels: the 1,025th bracket is refused
    # invalid UTF-8 names the byte and where it is (the third character of line 2)
    with pytest.raises(
        InputError, match=r"^line 2, column 3: invalid JSON \(not UTF-8: byte 0xe9\)"
    ):
        jsonio.parse(b'[\n"a\xe9"]')


def test_read_json_names_the_file_once(tmp_path: Path) -> None:
    missing = tmp_path / "gone.json"
    with pytest.raises(InputError) as caught:
        jsonio.read_json(missing)
    assert str(caught.value) == f"{missing}: no such file or folder"
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"[1,")
    with pytest.raises(InputError) as caught:
        jsonio.read_json(bad)
    assert str(caught.value).startswith(f"{bad}: line 1, column 4: invalid JSON")


def test_jsonl_lines_are_documents_and_bad_lines_are_values() -> None:
    docs = list(jsonio.parse_lines(b'\xef\xbb\xbf{"a": 1}\n\n[2\n"\xff"\n'))
    assert [d.location for d in docs] == ["line 1", "line 3", "line 4"]
    assert docs[0].value == {"a": 1}
    assert isinstance(docs[1].value, InputError)
    assert str(docs[1].value).startswith("line 3, column 3: invalid JSON")
    assert str(docs[2].value) == "line 4, column 2: invalid JSON (not UTF-8: byte 0xff)"


# --------------------------------------------------------------------------- write_atomic


def _hidden(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(".")]


def test_new_file_respects_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        jsonio.write_atomic(tmp_path / "new.jsonl", [b"a\n", b"b\n"])
    finally:
        os.umask(old)
    target = tmp_path / "new.jsonl"
    assert target.read_bytes() == b"a\nb\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # 0666 minus 027
    assert _hidden(tmp_path) == []


def test_existing_file_keeps_its_mode_and_is_replaced_whole(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_bytes(b"old\n")
    target.chmod(0o604)
    jsonio.write_atomic(target, b"new\n")
    assert target.read_bytes() == b"new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o604


def test_an_error_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    target.write_bytes(b"old\n")

    def chunks():
        yield b"half"
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        jsonio.write_atomic(target, chunks())
    assert target.read_bytes() == b"old\n"
    assert _hidden(tmp_path) == []


def test_a_link_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_bytes(b"old\n")
    real.chmod(0o640)
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    jsonio.write_atomic(link, b"new\n")
    assert link.is_symlink() and real.read_bytes() == b"new\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640


def test_a_fifo_is_written_through(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    jsonio.write_atomic(fifo, [b"x\n", b"y\n"])
    reader.join(timeout=10)
    assert got == [b"x\ny\n"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # still a FIFO, not a regular file
    assert _hidden(tmp_path) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
def test_a_device_is_written_through_never_replaced(tmp_path: Path) -> None:
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a copy of /dev/null
    null.chmod(0o666)  # mknod applies the umask
    jsonio.write_atomic(null, b"gone\n")
    info = null.stat()
    assert stat.S_ISCHR(info.st_mode) and info.st_rdev == os.makedev(1, 3)
    assert stat.S_IMODE(info.st_mode) == 0o666
    assert _hidden(tmp_path) == []


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        jsonio.write_atomic(tmp_path, b"x")


def test_dash_is_stdout(capfdbinary) -> None:
    jsonio.write_atomic("-", [b"a", b"b\n"])
    assert capfdbinary.readouterr().out == b"ab\n"


# ------------------------------------------------------------------ a file read whole


def _sparse(path: Path, size: int) -> Path:
    """A file of ``size`` bytes that takes no disk and is never read here."""
    with path.open("wb") as out:
        out.truncate(size)
    return path


def test_a_file_past_the_cap_is_refused_by_its_size_before_it_is_read(tmp_path: Path) -> None:
    big = _sparse(tmp_path / "big.json", 3 * 2**20)
    with pytest.raises(InputError) as caught:
        jsonio.read_bytes(big, cap=2**20)
    assert str(caught.value) == (
        f"{big}: 3145728 bytes, over the cap on a file read whole (1048576 bytes; "
        "DAGMATH_MAX_FILE_BYTES sets another)"
    )
    exact = tmp_path / "exact.json"
    exact.write_bytes(b"[" + b" " * 198 + b"]")  # 200 bytes: the cap is inclusive
    assert jsonio.read_bytes(exact, cap=200) == exact.read_bytes()
    with pytest.raises(InputError, match=r": 200 bytes, over the cap .*\(199 bytes;"):
        jsonio.read_bytes(exact, cap=199)


def test_the_file_cap_is_1_gib_unless_the_environment_says_otherwise(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.delenv("DAGMATH_MAX_FILE_BYTES", raising=False)
    assert jsonio.max_file_bytes() == 2**30
    huge = _sparse(tmp_path / "huge.json", 2**30 + 1)  # sparse: no disk, no memory
    with pytest.raises(InputError) as caught:
        jsonio.read_json(huge)
    assert str(caught.value).startswith(f"{huge}: 1073741825 bytes, over the cap")
    small = _sparse(tmp_path / "small.json", 4096)
    monkeypatch.setenv("DAGMATH_MAX_FILE_BYTES", "4095")
    with pytest.raises(InputError, match=r": 4096 bytes, over the cap .*\(4095 bytes;"):
        jsonio.read_json(small)


@pytest.mark.parametrize("raw", ["0", "-5", "1.5", "lots", "9" * 30])
def test_the_file_cap_from_the_environment_is_checked(raw: str) -> None:
    assert jsonio.max_file_bytes({}) == 2**30
    assert jsonio.max_file_bytes({"DAGMATH_MAX_FILE_BYTES": " 1048576 "}) == 2**20
    with pytest.raises(InputError, match="DAGMATH_MAX_FILE_BYTES="):
        jsonio.max_file_bytes({"DAGMATH_MAX_FILE_BYTES": raw})


def test_a_stream_past_the_cap_is_refused_at_the_cap(tmp_path: Path) -> None:
    """A FIFO has no size to look at: it is read a chunk at a time and refused once past
    the cap, not read to its end (``/dev/zero`` has none)."""
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)

    def write() -> None:
        try:
            with fifo.open("wb") as out:
                out.write(b" " * (5 * 2**20))
        except BrokenPipeError:  # the reader stopped at the cap
            pass

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    with pytest.raises(InputError) as caught:
        jsonio.read_bytes(fifo, cap=2**20)
    writer.join(timeout=10)
    assert str(caught.value) == (
        f"{fifo}: more than 1048576 bytes, over the cap on a file read whole (1048576 "
        "bytes; DAGMATH_MAX_FILE_BYTES sets another)"
    )
