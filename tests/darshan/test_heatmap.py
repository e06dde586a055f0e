"""HEATMAP module: the writer's records read back by pydarshan and by our reader,
and malformed HEATMAP regions evicted with a reason."""

import struct

import numpy as np
import pytest

from mosaic.darshan import formats as F
from mosaic.darshan.reader import read_log
from mosaic.darshan.writer import darshan_hash, write_log
from mosaic.errors import LogError
from mosaic_testing.written import ROWS, make_log, with_heatmaps


def rows_of(h: F.HeatmapRecords):
    return sorted(
        (api, rank, width, h.write_bins[a : a + n].tolist(), h.read_bins[a : a + n].tolist())
        for api, rank, width, a, n in zip(
            h.apis.tolist(), h.ranks.tolist(), h.bin_seconds.tolist(), h.offsets.tolist(), h.nbins.tolist()
        )
    )


def test_api_ids_are_darshan_hashes_of_their_names():
    assert darshan_hash(list(F.HEATMAP_API_IDS.values())).tolist() == list(F.HEATMAP_API_IDS)


@pytest.mark.parametrize("version", ["3.21", "3.41"])
@pytest.mark.parametrize("big", [False, True])
@pytest.mark.parametrize("streams", [1, 3])
def test_our_reader_reads_back_every_record(version, big, streams):
    got = read_log(write_log(with_heatmaps(), version, big_endian=big, streams_per_region=streams)).heatmaps
    assert rows_of(got) == sorted(ROWS)
    assert got.ids.tolist() == darshan_hash(got.apis.tolist()).tolist()


@pytest.mark.parametrize("version", ["3.21", "3.41"])
def test_pydarshan_reads_back_every_record(tmp_path, version):
    darshan = pytest.importorskip("darshan")
    path = tmp_path / "x.darshan"
    path.write_bytes(write_log(with_heatmaps(), version, streams_per_region=2))
    report = darshan.DarshanReport(str(path), read_all=True)
    got = sorted(
        (
            "heatmap:" + api,
            rank,
            h._bin_width_seconds,
            h._data["write"][rank].tolist(),
            h._data["read"][rank].tolist(),
        )
        for api, h in report.heatmaps.items()
        for rank in h._ranks
    )
    assert got == sorted(ROWS)
    # The API names are name records, as the runtime writes them.
    assert {n for n in report.name_records.values() if n.startswith("heatmap:")} == {
        "heatmap:POSIX",
        "heatmap:STDIO",
        "heatmap:MPIIO",
    }


def test_uniform_and_ragged_bin_counts_read_alike():
    uniform = [r for r in ROWS if r[0] != "heatmap:STDIO"]
    assert rows_of(read_log(write_log(with_heatmaps(uniform))).heatmaps) == sorted(uniform)
    zero_bins = [("heatmap:POSIX", 1, 0.1, [], [])]
    assert rows_of(read_log(write_log(with_heatmaps(zero_bins))).heatmaps) == zero_bins


def test_format_without_the_module_refuses_heatmaps():
    log = with_heatmaps()
    log.modules = {F.POSIX: log.modules[F.POSIX]}  # POSIX v4 exists in 3.10
    with pytest.raises(ValueError, match="HEATMAP"):
        write_log(log, "3.10")


def test_log_without_heatmap_has_none():
    assert read_log(write_log(make_log())).heatmaps is None


def test_missing_name_record_falls_back_to_the_known_id():
    log = with_heatmaps()
    data = write_log(log)
    # Same records, their name records empty: the known ids still name the API.
    hm = log.heatmaps
    log.heatmaps = F.HeatmapRecords(
        hm.ids,
        hm.ranks,
        np.full(len(hm.ids), "", dtype="<U13"),
        hm.bin_seconds,
        hm.nbins,
        hm.write_bins,
        hm.read_bins,
    )
    stripped = write_log(log)
    assert len(stripped) < len(data)
    assert rows_of(read_log(stripped).heatmaps) == sorted(ROWS)


def _heatmap_region_log(raw: bytes, version: int = 1) -> bytes:
    """A log whose HEATMAP region holds ``raw`` (no compression), the rest from make_log."""
    log = make_log()
    base = write_log(log, compression="none")
    size, slots = F.header_struct("3.41").size, F.header_slots("3.41")
    slot = F.stored_module_id("3.41", F.HEATMAP)
    head = bytearray(base[:size])
    struct.pack_into("<QQ", head, 48 + 16 * slot, len(base), len(raw))
    struct.pack_into("<I", head, 48 + 16 * slots + 4 * slot, version)
    return bytes(head) + base[size:] + raw


def _record(nbins_stored: int, n: int, width: float = 0.1) -> bytes:
    return struct.pack("<Qqdqqq", list(F.HEATMAP_API_IDS)[0], 0, width, nbins_stored, 0, 0) + struct.pack(
        f"<{2 * n}q", *range(2 * n)
    )


def test_hand_built_region_reads():
    raw = _record(2, 2) + _record(1, 1, 0.2)
    got = read_log(_heatmap_region_log(raw)).heatmaps
    assert rows_of(got) == [("heatmap:POSIX", 0, 0.1, [0, 1], [2, 3]), ("heatmap:POSIX", 0, 0.2, [0], [1])]


@pytest.mark.parametrize(
    "raw, version, reason",
    [
        (_record(3, 2), 1, "corrupt_stream"),  # bins run past the region
        (_record(-1, 0), 1, "corrupt_stream"),  # negative bin count
        (_record(2, 2)[:40], 1, "corrupt_stream"),  # header cut short
        (_record(2, 2) + _record(5, 2), 1, "corrupt_stream"),  # second record cut short
        (_record(2, 2, 0.0), 1, "corrupt_stream"),  # bins of no width
        (_record(2, 2, float("nan")), 1, "corrupt_stream"),
        (_record(2, 2), 2, "unsupported_version"),
    ],
)
def test_malformed_region_is_evicted(raw, version, reason):
    with pytest.raises(LogError) as err:
        read_log(_heatmap_region_log(raw, version))
    assert err.value.reason == reason
