"""The results site: static pages of a results directory's history over time.

``stagebench site`` reads the history (:mod:`stagebench.history.index`), groups it into
series and finds their steps (:mod:`stagebench.history.series`), turns each series into
the data its page draws (:mod:`stagebench.site.data`, with each point's command to run
it again, :mod:`stagebench.site.rerun`), lays the pages out (:mod:`stagebench.site.pages`,
drawn in the browser by :mod:`stagebench.site.script`) and writes them with one copy of
plotly.js (:mod:`stagebench.site.build`). Nothing needs a server.
"""
