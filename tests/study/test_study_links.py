"""Participant links open the app's root with the study and the token as query parameters."""

from urllib.parse import parse_qs, urlsplit

from xcore.study.access import STUDY_PARAM, TOKEN_PARAM, app_root, participant_links


def test_links_point_at_the_app_root_whatever_page_address_is_given():
    assert app_root("http://host:8501/esms?x=1") == "http://host:8501"
    assert app_root("localhost:8501") == "http://localhost:8501"
    links = participant_links("https://lab.example/study", "s1", ["pAbc-_9", "pXyz"])
    assert links[0].startswith("https://lab.example/?")
    q = parse_qs(urlsplit(links[0]).query)
    assert q == {STUDY_PARAM: ["s1"], TOKEN_PARAM: ["pAbc-_9"]}
    assert len(links) == 2
