"""wmkit.envs.phone_edit: the structured-edit target of the settings world's learned world model.
Decoding by hand on a status-bar screen, the round trip on the simulator's own transitions, and
untrusted edits that never raise."""
import pytest

from wmkit.envs import phone
from wmkit.envs import phone_edit as edit_format

BAR_OFF_ON = 'status: "Wi-Fi" off, "Bluetooth" on'
SETTINGS = "\n".join(["app: Settings | screen: settings", BAR_OFF_ON,
                      '[1] switch "Wi-Fi" off', '[2] switch "Bluetooth" on', '[3] button "Back"'])
HOME = "\n".join(["app: Home | screen: home", BAR_OFF_ON, '[1] app "Settings"', '[2] app "Clock"'])


def edit(new=(), deleted=(), updated=()):
    return edit_format._join(list(new), list(deleted), list(updated))


def test_a_flip_by_id_decodes_to_the_switch_line_and_the_bar():
    decoded = edit_format.decode_edit(SETTINGS, edit(updated=["[1] flipped"]))
    assert decoded == edit(updated=['status: "Wi-Fi" on, "Bluetooth" on', '[1] switch "Wi-Fi" on'])
    after = phone.apply_diff(SETTINGS, decoded)
    assert after.split("\n")[1:3] == ['status: "Wi-Fi" on, "Bluetooth" on', '[1] switch "Wi-Fi" on']


def test_opening_settings_takes_values_from_the_bar_and_deletes_by_id():
    opened = edit(new=['[1] switch "Wi-Fi" from-bar', '[2] switch "Bluetooth" from-bar', '[3] button "Back"'],
                  deleted=["[1]", "[2]"], updated=["app: Settings | screen: settings"])
    decoded = edit_format.decode_edit(HOME, opened)
    assert '[1] switch "Wi-Fi" off' in decoded and '[2] switch "Bluetooth" on' in decoded
    assert '[1] app "Settings"' in decoded and '[2] app "Clock"' in decoded  # deleted lines written out
    assert "status:" not in decoded  # the bar did not change
    assert phone.apply_diff(HOME, decoded) == SETTINGS


def test_encode_names_what_it_would_copy():
    real = phone.compute_diff(SETTINGS, SETTINGS.replace('"Bluetooth" on', '"Bluetooth" off'))
    assert edit_format.encode_edit(SETTINGS, real) == edit(updated=["[2] flipped"])


def test_round_trip_on_the_simulators_transitions():
    templates = ["setting_on", "setting_off", "setting_flip", "setting_match"]
    for status_bar, pool in ((True, templates), (True, None), (False, None)):
        for t in phone.collect_transitions(30, 5, pool, status_bar=status_bar):
            encoded = edit_format.encode_edit(t.state, t.diff)
            assert encoded is not None
            assert phone.apply_diff(t.state, edit_format.decode_edit(t.state, encoded)) == t.next_state


@pytest.mark.parametrize("garbage", ["", "New items:", "[9] flipped", "New items:\nDeleted items:\n[7]\nUpdated items:\n"
                                     "[1] flipped\n[8] flipped\n[2] switch \"Bluetooth\" from-bar\n[3] switch \"x",
                                     'New items:\n[4] switch "Nope" from-bar\nDeleted items:\nNone\nUpdated items:\nNone'])
def test_untrusted_edits_never_raise(garbage):
    decoded = edit_format.decode_edit(SETTINGS, garbage)
    assert isinstance(decoded, str)
    phone.apply_diff(SETTINGS, decoded)  # a string or None, never an exception


def test_a_predicted_screen_with_a_broken_bar_never_raises():
    """Rollouts feed predicted screens back in: the screen decoded against may hold a model's bar."""
    broken = SETTINGS.replace(BAR_OFF_ON, 'status: "Wi-\\q" on, "Bluetooth" off, "x')
    decoded = edit_format.decode_edit(broken, edit(updated=["[2] flipped", '[1] switch "Wi-Fi" from-bar']))
    assert '[2] switch "Bluetooth" off' in decoded  # the flip reads the switch line, not the bar
    phone.apply_diff(broken, decoded)
