package sqlstore

// JobStatsQuery is the query of JobStats, for plan checks.
const JobStatsQuery = jobStatsQuery
