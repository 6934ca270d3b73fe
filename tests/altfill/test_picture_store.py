"""Where a document's pictures wait to be described (capdesk.altfill.documents.PictureStore): any entry
name a document may hold, however long, gives a file with the picture's bytes, once per picture."""

from __future__ import annotations

from capdesk.altfill.documents import PictureStore


def test_a_name_longer_than_the_file_system_takes_is_stored_under_a_short_one():
    store = PictureStore()
    try:
        long = "word/media/" + "照片" * 45 + ".png"  # 270 bytes of name: over the 255 a file name may have
        data = b"\x89PNG\r\n\x1a\n picture bytes"
        first = store.add(data, long)
        again = store.add(data, "word/media/" + "图" * 90 + ".png")  # the same picture under another long name
        assert first == again and first.read_bytes() == data and first.suffix == ".png"
        assert store.add(b"other bytes", "media/short.jpg").name == "short.jpg"
    finally:
        store.close()


def test_a_document_half_written_by_a_killed_run_leaves_the_folder_on_the_next(tmp_path):
    """kill -9 during alt-fill leaves the new document under a hidden temporary name beside the original;
    the next run in that folder moves it to the user's private recovered folder, bytes intact."""
    from killed_write import left_by_a_killed_write

    from capdesk.safe_files import recovery_folder, sweep_stale_temps, write_temp

    doc = tmp_path / "book.epub"
    doc.write_bytes(b"the original book")
    half = left_by_a_killed_write(doc, b"x" * 4096)  # what the killed run had written of the new book
    write_temp(tmp_path / "other.txt", b"a later write in the same folder").unlink()  # sweeps the folder once
    assert not half.exists() and doc.read_bytes() == b"the original book"
    assert [p.read_bytes() for p in recovery_folder().iterdir()] == [b"x" * 4096]
    assert sweep_stale_temps(tmp_path) == []  # once per folder and process
