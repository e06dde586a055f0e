"""HTML pages for people who read in a browser: one job (`mosaic explain`), a year (`mosaic report`).

Every page is plain HTML written by Python (no template engine: the pages are
few and their markup small), styled by one stylesheet, and works offline:
the one script library, uPlot (MIT, vendored in ``assets/`` with its
licence), draws the interactive charts (drag to zoom, hover for a value).
A job page from `mosaic explain` carries its stylesheet, scripts and images
inline, so it is one file to mail or attach; the pages of a report site
share ``report/assets/`` instead.
"""
