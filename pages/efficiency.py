"""Efficiency: logic-program proofs against the shortest proof (placeholder until wired)."""

import streamlit as st

st.title("Efficiency")
st.info("Coming soon.")
