"""Alt text written into pages and documents: the ``<img>`` tags of HTML, the images of Markdown,
and the pictures of EPUB, Word, PowerPoint and OpenDocument files.

Owns finding each image reference to the character (``html_images``, ``md_images``), reading a
page so that only insertions change it (``pagetext``, ``pages``), the fill itself with backups and
re-checks (``fill``, taking ``options`` whole), which pictures a page may have described (``places``),
the originals kept and pruned (``backups``) and the report (``report``, ``rows``). Documents: zip files
rewritten with every other entry byte for byte (``zipsafe``), their XML scanned without re-serialising
(``xmlscan``, ``spots``), by format (``epub``, ``office``), driven by ``documents``; PDFs (``pdf`` and
its helpers). Web pages, zip documents and PDFs are one interface and a registry (``formats``), and
every file is read through the same bounded read (``file_checks``).

May import: folders/ (report helpers), sidecars/ (text cleaned for writing), describe/, model/,
``safe_files`` and the shared vocabulary. Never session/, cli/, gui/.
"""
