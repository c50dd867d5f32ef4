"""The service's routes, one module each: the page, health, reading (search, summaries, documents) and writing
(uploads, jobs, deletions). Each reaches the running service through
:func:`citesum.service.routes.common.service_of`."""
