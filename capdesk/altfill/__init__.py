"""Alt text written into pages: the ``<img>`` tags of HTML and the images of Markdown.

Owns finding each image reference to the character (``html_images``, ``md_images``), reading a
page so that only insertions change it (``pagetext``), the fill itself with backups and
re-checks (``fill``) and its report (``report``).

May import: folders/ (report helpers), describe/, model/, ``safe_files`` and the shared
vocabulary. Never session/, cli/, gui/.
"""
