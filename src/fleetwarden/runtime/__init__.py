"""Layer 4: what runs controllers. Clocks, work queues, informer caches, the event
recorder, settings and feature gates, and the controller manager with its real-time and
virtual-time drivers.

Import them from their modules (`fleetwarden.runtime.settings`...): this package imports
none of them, so that reading the settings (every `fleetwarden` command does, for the
options of up and agent) does not import the controller manager, the store and the API.
"""
