"""Jobs over many pictures on disk: batch export, watching folders, lists of paths.

Owns ``batch`` (caption in batches, write sidecars, reports, resume), ``ray_batch`` (the same
describing spread over a Ray cluster), ``watch`` (new or changed pictures, once fully written),
``pathlist`` (``--files-from`` lists and mirrored output folders) and ``reading`` (the pictures in the
folders named, decoded ahead of the model, and described in order).

May import: sidecars/, describe/, model/ and the shared vocabulary. Never session/, cli/, gui/.
"""
