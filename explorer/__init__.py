"""The app's glue that is not a page: the data source, the sidebar, the graph view.

It may import Streamlit; the library ``dagmath_viz`` never does."""
