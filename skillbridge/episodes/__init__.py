"""Recorded episodes: the format and its reader/writer (:mod:`.episode`), replay, video and
``--verify`` (:mod:`.replay`), the Rerun viewer (:mod:`.viewer`), and exports to LeRobot and
Minari datasets (:mod:`.lerobot_export`, :mod:`.minari_export`)."""
