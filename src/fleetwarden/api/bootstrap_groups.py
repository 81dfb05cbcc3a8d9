"""The groups of the bootstrap tokens agents join the hub with, one per dialect.

Plain names, in a module of their own so that what only names them (the help of
`fleetwarden token create`, built for every command) need not import the API's models.
Each dialect's cluster module exports its own as AGENT_BOOTSTRAP_GROUP.
"""

# karmadactl register's tokens (karmada-agent).
KARMADA = "system:bootstrappers:karmada:default-cluster-token"
# clusteradm join's tokens (OCM's registration agent).
OCM = "system:bootstrappers:managedcluster"
