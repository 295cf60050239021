"""Efficiency: logic-program proofs against the shortest proof (placeholder until wired)."""

import streamlit as st

from pages import common

common.corpus()

st.title("Efficiency")
st.info("Coming soon.")
