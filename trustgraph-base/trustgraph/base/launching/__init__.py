"""Running a stack on one machine: its run files, the embedded broker, where servers listen.

* :mod:`.stack`: the run files of a stack's data directory (which stack runs
  there, its broker URL, its components' state);
* :mod:`.broker`: the embedded pulsar-lite broker (``EmbeddedBroker``);
* :mod:`.listening`: loopback or network, and the address a local client uses.

It imports nothing of the messaging room, nor the messaging room anything of
it: the processors room joins the two (``processors.broker_choice`` reads a
running stack's broker from :mod:`.stack` and hands the messaging core its
hint).
"""
