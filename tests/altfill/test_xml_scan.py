"""The XML scanner under the documents' pictures (capdesk.altfill.xmlscan): memory linear in the part's size
whatever its namespaces, and the same elements, scopes and text as before."""

from __future__ import annotations

import tracemalloc

from capdesk.altfill.xmlscan import parse_part


def test_a_root_declaring_many_namespaces_costs_no_copy_per_element():
    # A DOCX-shaped part whose root declares a thousand namespaces over three thousand paragraphs: each
    # element once carried its own copy of the root's scope (three million entries, hundreds of MB).
    decls = " ".join(f'xmlns:n{i}="urn:n{i}"' for i in range(1000))
    body = "".join(f"<w:p><w:r><w:t>word {i}</w:t></w:r></w:p>" for i in range(3000))
    raw = f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="urn:w" {decls}>{body}</w:document>'.encode()
    tracemalloc.start()
    try:
        part = parse_part("word/document.xml", raw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(part.elements) == 1 + 3 * 3000
    assert peak < 40 * 2**20, f"{peak / 2**20:.0f} MiB to read a {len(raw) / 2**10:.0f} KiB part"
    last = part.elements[-1]
    assert last.local == "t" and last.text == "word 2999" and part.prefix_for(last, "urn:n999") == "n999"


def test_a_namespace_declared_deeper_is_in_force_there_only():
    raw = (b'<r xmlns="urn:a"><x xmlns:p="urn:p"><p:y>in</p:y></x><z>out<i/>after</z></r>')
    part = parse_part("part.xml", raw)
    by = {el.local: el for el in part.elements}
    assert part.prefix_for(by["y"], "urn:p") == "p" and by["y"].ns == "urn:p"
    assert part.prefix_for(by["z"], "urn:p") is None and part.prefix_for(by["z"], "urn:a") == ""
    assert by["y"].text == "in" and by["z"].text == "outafter"
    assert by["r"].scope is by["z"].scope  # no declaration of its own: the parent's scope, not a copy
