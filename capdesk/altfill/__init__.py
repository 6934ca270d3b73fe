"""Alt text written into pages: the ``<img>`` tags of HTML and the images of Markdown.

Owns finding each image reference to the character (``html_images``, ``md_images``), reading a
page so that only insertions change it (``pagetext``), the fill itself with backups and
re-checks (``fill``), which pictures a page may have described (``places``), the originals kept and
pruned (``backups``) and the report (``report``).

May import: folders/ (report helpers), sidecars/ (text cleaned for writing), describe/, model/,
``safe_files`` and the shared vocabulary. Never session/, cli/, gui/.
"""
