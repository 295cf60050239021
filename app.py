"""dagmath-viz: the Streamlit explorer's frame.

Page config, the data-source sidebar, the load-problems panel and ``st.navigation`` over
the views in ``pages/``. Run: ``streamlit run app.py [-- --data PATH [--answers FILE]]``.
"""

from __future__ import annotations

import streamlit as st

from explorer import common

st.set_page_config(
    page_title="dagmath-viz", page_icon=str(common.ROOT / "assets" / "favicon.png"), layout="wide"
)

PAGES = [
    st.Page("pages/overview.py", title="Overview", icon=":material/leaderboard:", default=True),
    st.Page("pages/trajectories.py", title="Trajectories", icon=":material/table_rows:"),
    st.Page("pages/trajectory.py", title="Trajectory", icon=":material/account_tree:"),
    st.Page("pages/compare.py", title="Compare", icon=":material/compare:"),
    st.Page("pages/distributions.py", title="Distributions", icon=":material/bar_chart:"),
    st.Page("pages/dead_ends.py", title="Dead ends", icon=":material/block:"),
    st.Page("pages/efficiency.py", title="Efficiency", icon=":material/speed:"),
]

navigation = st.navigation(PAGES)
corpus = common.sidebar_data_source()
if corpus is not None:
    common.load_problems_panel(corpus)
    navigation.run()
