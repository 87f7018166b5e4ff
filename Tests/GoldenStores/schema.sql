-- PRAGMA user_version = 7

-- index activityBucketSamplesUniqueKey on activityBucketSamples
CREATE UNIQUE INDEX "activityBucketSamplesUniqueKey" ON "activityBucketSamples" ("startEpoch");

-- index activityDailiesByDate on activityDailies
CREATE INDEX "activityDailiesByDate" ON "activityDailies" ("date");

-- index activityDailiesUniqueKey on activityDailies
CREATE UNIQUE INDEX "activityDailiesUniqueKey" ON "activityDailies" ("id");

-- index activityEventsUniqueKey on activityEvents
CREATE UNIQUE INDEX "activityEventsUniqueKey" ON "activityEvents" ("id");

-- index activityGpsPointsUniqueKey on activityGpsPoints
CREATE UNIQUE INDEX "activityGpsPointsUniqueKey" ON "activityGpsPoints" ("id");

-- index activitySamplesUniqueKey on activitySamples
CREATE UNIQUE INDEX "activitySamplesUniqueKey" ON "activitySamples" ("id");

-- index activitySensorPollEventsUniqueKey on activitySensorPollEvents
CREATE UNIQUE INDEX "activitySensorPollEventsUniqueKey" ON "activitySensorPollEvents" ("id");

-- index activitySessionsByEnd on activitySessions
CREATE INDEX "activitySessionsByEnd" ON "activitySessions" ("endedAt");

-- index activitySessionsUniqueKey on activitySessions
CREATE UNIQUE INDEX "activitySessionsUniqueKey" ON "activitySessions" ("id");

-- index batterySamplesUniqueKey on batterySamples
CREATE UNIQUE INDEX "batterySamplesUniqueKey" ON "batterySamples" ("id");

-- index coachConversationsUniqueKey on coachConversations
CREATE UNIQUE INDEX "coachConversationsUniqueKey" ON "coachConversations" ("id");

-- index coachMemoriesUniqueKey on coachMemories
CREATE UNIQUE INDEX "coachMemoriesUniqueKey" ON "coachMemories" ("id");

-- index coachMessagesUniqueKey on coachMessages
CREATE UNIQUE INDEX "coachMessagesUniqueKey" ON "coachMessages" ("id");

-- index coachNotificationRecordsUniqueKey on coachNotificationRecords
CREATE UNIQUE INDEX "coachNotificationRecordsUniqueKey" ON "coachNotificationRecords" ("id");

-- index coachSummariesUniqueKey on coachSummaries
CREATE UNIQUE INDEX "coachSummariesUniqueKey" ON "coachSummaries" ("id");

-- index coachToolCallsUniqueKey on coachToolCalls
CREATE UNIQUE INDEX "coachToolCallsUniqueKey" ON "coachToolCalls" ("id");

-- index cycleDaysUniqueKey on cycleDays
CREATE UNIQUE INDEX "cycleDaysUniqueKey" ON "cycleDays" ("dateString");

-- index derivedUpdatesUniqueKey on derivedUpdates
CREATE UNIQUE INDEX "derivedUpdatesUniqueKey" ON "derivedUpdates" ("id");

-- index deviceMeasurementConfigsUniqueKey on deviceMeasurementConfigs
CREATE UNIQUE INDEX "deviceMeasurementConfigsUniqueKey" ON "deviceMeasurementConfigs" ("deviceId");

-- index devicesUniqueKey on devices
CREATE UNIQUE INDEX "devicesUniqueKey" ON "devices" ("id");

-- index measurementsByKindAndTime on measurements
CREATE INDEX "measurementsByKindAndTime" ON "measurements" ("kindRaw", "timestamp");

-- index measurementsUniqueKey on measurements
CREATE UNIQUE INDEX "measurementsUniqueKey" ON "measurements" ("id");

-- index rawPacketsUniqueKey on rawPackets
CREATE UNIQUE INDEX "rawPacketsUniqueKey" ON "rawPackets" ("id");

-- index readinessDailiesByDate on readinessDailies
CREATE INDEX "readinessDailiesByDate" ON "readinessDailies" ("date");

-- index readinessDailiesUniqueKey on readinessDailies
CREATE UNIQUE INDEX "readinessDailiesUniqueKey" ON "readinessDailies" ("id");

-- index sleepSessionsByDate on sleepSessions
CREATE INDEX "sleepSessionsByDate" ON "sleepSessions" ("date");

-- index sleepSessionsUniqueKey on sleepSessions
CREATE UNIQUE INDEX "sleepSessionsUniqueKey" ON "sleepSessions" ("id");

-- index sleepStageBlocksBySession on sleepStageBlocks
CREATE INDEX "sleepStageBlocksBySession" ON "sleepStageBlocks" ("sessionId");

-- index sleepStageBlocksUniqueKey on sleepStageBlocks
CREATE UNIQUE INDEX "sleepStageBlocksUniqueKey" ON "sleepStageBlocks" ("id");

-- index sqlite_autoindex_attachments_1 on attachments

-- index sqlite_autoindex_documentSwaps_1 on documentSwaps

-- index sqlite_autoindex_foodProducts_1 on foodProducts

-- index sqlite_autoindex_mealEntries_1 on mealEntries

-- index sqlite_autoindex_schemaMigrations_1 on schemaMigrations

-- index sqlite_autoindex_settings_1 on settings

-- index userGoalsUniqueKey on userGoals
CREATE UNIQUE INDEX "userGoalsUniqueKey" ON "userGoals" ("id");

-- index userProfilesUniqueKey on userProfiles
CREATE UNIQUE INDEX "userProfilesUniqueKey" ON "userProfiles" ("id");

-- index wearableLogsUniqueKey on wearableLogs
CREATE UNIQUE INDEX "wearableLogsUniqueKey" ON "wearableLogs" ("id");

-- table activityBucketSamples on activityBucketSamples
CREATE TABLE "activityBucketSamples" (
  "startEpoch" INTEGER NOT NULL,
  "date" INTEGER NOT NULL,
  "timestamp" INTEGER NOT NULL,
  "steps" INTEGER NOT NULL,
  "distanceMeters" NOT NULL,
  "source" TEXT NOT NULL,
  "updatedAt" INTEGER NOT NULL
);

-- table activityDailies on activityDailies
CREATE TABLE "activityDailies" (
  "id" TEXT NOT NULL,
  "date" INTEGER NOT NULL,
  "steps" INTEGER NOT NULL,
  "calories" NOT NULL,
  "distanceMeters" NOT NULL,
  "activeMinutes" INTEGER NOT NULL,
  "source" TEXT NOT NULL,
  "syncedAt" INTEGER,
  "createdAt" INTEGER NOT NULL,
  "updatedAt" INTEGER NOT NULL,
  "estimatedActiveCalories"
);

-- table activityEvents on activityEvents
CREATE TABLE "activityEvents" (
  "id" TEXT NOT NULL,
  "sessionId" TEXT NOT NULL,
  "kind" TEXT NOT NULL,
  "timestamp" INTEGER NOT NULL,
  "payloadJSON" TEXT
);

-- table activityGpsPoints on activityGpsPoints
CREATE TABLE "activityGpsPoints" (
  "id" TEXT NOT NULL,
  "sessionId" TEXT NOT NULL,
  "latitude" NOT NULL,
  "longitude" NOT NULL,
  "altitude",
  "horizontalAccuracy",
  "speed",
  "course",
  "timestamp" INTEGER NOT NULL,
  "accepted" INTEGER NOT NULL,
  "rejectionReason" TEXT
);

-- table activitySamples on activitySamples
CREATE TABLE "activitySamples" (
  "id" TEXT NOT NULL,
  "sessionId" TEXT NOT NULL,
  "measurementId" TEXT,
  "kind" TEXT NOT NULL,
  "value" NOT NULL,
  "unit" TEXT NOT NULL,
  "timestamp" INTEGER NOT NULL,
  "source" TEXT NOT NULL,
  "confidenceRaw" TEXT NOT NULL
);

-- table activitySensorPollEvents on activitySensorPollEvents
CREATE TABLE "activitySensorPollEvents" (
  "id" TEXT NOT NULL,
  "sessionId" TEXT NOT NULL,
  "timestamp" INTEGER NOT NULL,
  "kind" TEXT NOT NULL,
  "status" TEXT NOT NULL,
  "value",
  "errorMessage" TEXT
);

-- table activitySessions on activitySessions
CREATE TABLE "activitySessions" (
  "id" TEXT NOT NULL,
  "type" TEXT NOT NULL,
  "statusRaw" TEXT NOT NULL,
  "startedAt" INTEGER NOT NULL,
  "endedAt" INTEGER,
  "totalPauseSeconds" NOT NULL,
  "calories",
  "distanceMeters",
  "avgHeartRate",
  "minHeartRate",
  "maxHeartRate",
  "avgSpO2",
  "latestSpO2",
  "notes" TEXT,
  "useGps" INTEGER NOT NULL,
  "perceivedEffort" TEXT,
  "gpsPointCount" INTEGER NOT NULL,
  "rejectedGpsPointCount" INTEGER NOT NULL,
  "hrPollCount" INTEGER NOT NULL,
  "hrPollFailureCount" INTEGER NOT NULL,
  "spo2PollCount" INTEGER NOT NULL,
  "spo2PollFailureCount" INTEGER NOT NULL,
  "liveActivityID" TEXT,
  "lastSensorPollAt" INTEGER,
  "lastGpsPointAt" INTEGER,
  "vitalsModeRaw" TEXT NOT NULL,
  "createdAt" INTEGER NOT NULL,
  "updatedAt" INTEGER NOT NULL,
  "stravaActivityId" TEXT
);

-- table attachments on attachments
CREATE TABLE "attachments" (
  "file" TEXT NOT NULL PRIMARY KEY,
  "contents" BLOB NOT NULL
);

-- table batterySamples on batterySamples
CREATE TABLE "batterySamples" (
  "id" TEXT NOT NULL,
  "percent" INTEGER NOT NULL,
  "timestamp" INTEGER NOT NULL,
  "createdAt" INTEGER NOT NULL
);

-- table coachConversations on coachConversations
CREATE TABLE "coachConversations" (
  "id" TEXT NOT NULL,
  "title" TEXT NOT NULL,
  "totalInputTokens" INTEGER NOT NULL,
  "totalOutputTokens" INTEGER NOT NULL,
  "totalCostUSD" NOT NULL,
  "createdAt" INTEGER NOT NULL,
  "updatedAt" INTEGER NOT NULL
);

-- table coachMemories on coachMemories
CREATE TABLE "coachMemories" (
  "id" TEXT NOT NULL,
  "key" TEXT NOT NULL,
  "value" TEXT NOT NULL,
  "memoryType" TEXT NOT NULL,
  "importance" INTEGER NOT NULL,
  "expiresAt" INTEGER,
  "sourceMessageId" TEXT,
  "isUserEditable" INTEGER NOT NULL,
  "createdAt" INTEGER NOT NULL,
  "updatedAt" INTEGER NOT NULL
);

-- table coachMessages on coachMessages
CREATE TABLE "coachMessages" (
  "id" TEXT NOT NULL,
  "conversationId" TEXT NOT NULL,
  "role" TEXT NOT NULL,
  "body" TEXT NOT NULL,
  "cardsJSON" TEXT,
  "pendingActionJSON" TEXT,
  "attachmentsJSON" TEXT,
  "inputTokens" INTEGER,
  "outputTokens" INTEGER,
  "costUSD",
  "modelUsed" TEXT,
  "providerUsed" TEXT,
  "loggedActivityIdsJSON" TEXT,
  "createdAt" INTEGER NOT NULL,
  "loggedMealIdsJSON" TEXT
);

-- table coachNotificationRecords on coachNotificationRecords
CREATE TABLE "coachNotificationRecords" (
  "id" TEXT NOT NULL,
  "slotRaw" TEXT NOT NULL,
  "dateKey" TEXT NOT NULL,
  "title" TEXT NOT NULL,
  "body" TEXT NOT NULL,
  "createdAt" INTEGER NOT NULL
);

-- table coachSummaries on coachSummaries
CREATE TABLE "coachSummaries" (
  "id" TEXT NOT NULL,
  "kind" TEXT NOT NULL,
  "scopeKey" TEXT NOT NULL,
  "title" TEXT NOT NULL,
  "body" TEXT NOT NULL,
  "chipsJSON" TEXT,
  "conversationId" TEXT,
  "dataSignature" TEXT NOT NULL,
  "createdAt" INTEGER NOT NULL,
  "updatedAt" INTEGER NOT NULL
);

-- table coachToolCalls on coachToolCalls
CREATE TABLE "coachToolCalls" (
  "id" TEXT NOT NULL,
  "conversationId" TEXT NOT NULL,
  "messageId" TEXT,
  "toolName" TEXT NOT NULL,
  "inputJSON" TEXT,
  "outputJSON" TEXT,
  "label" TEXT NOT NULL,
  "statusRaw" TEXT NOT NULL,
  "sequence" INTEGER NOT NULL,
  "createdAt" INTEGER NOT NULL
);

-- table cycleDays on cycleDays
CREATE TABLE "cycleDays" (
  "dateString" TEXT NOT NULL,
  "date" INTEGER NOT NULL,
  "isPeriod" INTEGER NOT NULL,
  "isDisturbed" INTEGER NOT NULL,
  "disturbedAutoDetected" INTEGER NOT NULL,
  "notes" TEXT,
  "updatedAt" INTEGER NOT NULL
);

-- table derivedUpdates on derivedUpdates
CREATE TABLE "derivedUpdates" (
  "id" TEXT NOT NULL,
  "timestamp" INTEGER NOT NULL,
  "kind" TEXT NOT NULL,
  "entityType" TEXT NOT NULL,
  "entityId" TEXT NOT NULL,
  "payloadJSON" TEXT
);

-- table deviceMeasurementConfigs on deviceMeasurementConfigs
CREATE TABLE "deviceMeasurementConfigs" (
  "deviceId" TEXT NOT NULL,
  "hrIntervalMinutes" INTEGER NOT NULL,
  "hrEnabled" INTEGER NOT NULL,
  "spo2Enabled" INTEGER NOT NULL,
  "stressEnabled" INTEGER NOT NULL,
  "hrvEnabled" INTEGER NOT NULL,
  "temperatureEnabled" INTEGER NOT NULL,
  "updatedAt" INTEGER NOT NULL
);

-- table devices on devices
CREATE TABLE "devices" (
  "id" TEXT NOT NULL,
  "name" TEXT NOT NULL,
  "advertisedName" TEXT,
  "peripheralIdentifier" TEXT,
  "bleAddressHint" TEXT,
  "batteryPercent" INTEGER,
  "stateRaw" TEXT NOT NULL,
  "lastConnectedAt" INTEGER,
  "lastDisconnectedAt" INTEGER,
  "lastSyncAt" INTEGER,
  "lastFullSyncAt" INTEGER,
  "firmwareVersion" TEXT,
  "wearableModelID" TEXT,
  "deviceTypeRaw" TEXT NOT NULL,
  "capabilitiesRaw" TEXT NOT NULL,
  "createdAt" INTEGER NOT NULL,
  "updatedAt" INTEGER NOT NULL
);

-- table documentSwaps on documentSwaps
CREATE TABLE "documentSwaps" ("staging" TEXT NOT NULL PRIMARY KEY);

-- table foodProducts on foodProducts
CREATE TABLE "foodProducts" ("code" TEXT NOT NULL UNIQUE, "row" TEXT NOT NULL);

-- table mealEntries on mealEntries
CREATE TABLE "mealEntries" ("id" TEXT NOT NULL UNIQUE, "row" TEXT NOT NULL);

-- table measurements on measurements
CREATE TABLE "measurements" (
  "id" TEXT NOT NULL,
  "kindRaw" TEXT NOT NULL,
  "value" NOT NULL,
  "unit" TEXT NOT NULL,
  "timestamp" INTEGER NOT NULL,
  "sourceRaw" TEXT NOT NULL,
  "confidenceRaw" TEXT NOT NULL,
  "activitySessionId" TEXT,
  "rawPacketId" TEXT,
  "createdAt" INTEGER NOT NULL
);

-- table rawPackets on rawPackets
CREATE TABLE "rawPackets" (
  "id" TEXT NOT NULL,
  "timestamp" INTEGER NOT NULL,
  "directionRaw" TEXT NOT NULL,
  "commandId" INTEGER NOT NULL,
  "hexPayload" TEXT NOT NULL,
  "decodedKind" TEXT,
  "decodedJSON" TEXT,
  "confidenceRaw" TEXT NOT NULL,
  "createdAt" INTEGER NOT NULL
);

-- table readinessDailies on readinessDailies
CREATE TABLE "readinessDailies" (
  "id" TEXT NOT NULL,
  "date" INTEGER NOT NULL,
  "score" INTEGER NOT NULL,
  "bandRaw" TEXT NOT NULL,
  "availablePoints" NOT NULL,
  "contributorsJSON" TEXT NOT NULL,
  "algorithmVersion" INTEGER NOT NULL,
  "computedAt" INTEGER NOT NULL,
  "createdAt" INTEGER NOT NULL,
  "updatedAt" INTEGER NOT NULL
);

-- table schemaMigrations on schemaMigrations
CREATE TABLE "schemaMigrations" ("name" TEXT NOT NULL PRIMARY KEY, "appliedAt" INTEGER NOT NULL);

-- table settings on settings
CREATE TABLE "settings" (
  "key" TEXT NOT NULL PRIMARY KEY,
  "value" TEXT NOT NULL
);

-- table sleepSessions on sleepSessions
CREATE TABLE "sleepSessions" (
  "id" TEXT NOT NULL,
  "date" INTEGER NOT NULL,
  "startAt" INTEGER NOT NULL,
  "endAt" INTEGER NOT NULL,
  "totalMinutes" INTEGER NOT NULL,
  "score" INTEGER,
  "syncedAt" INTEGER,
  "createdAt" INTEGER NOT NULL,
  "updatedAt" INTEGER NOT NULL,
  "sourceRaw" TEXT
);

-- table sleepStageBlocks on sleepStageBlocks
CREATE TABLE "sleepStageBlocks" (
  "id" TEXT NOT NULL,
  "sessionId" TEXT NOT NULL,
  "startAt" INTEGER NOT NULL,
  "startMinute" INTEGER NOT NULL,
  "durationMinutes" INTEGER NOT NULL,
  "stageRaw" TEXT NOT NULL
);

-- table userGoals on userGoals
CREATE TABLE "userGoals" (
  "id" TEXT NOT NULL,
  "steps" INTEGER NOT NULL,
  "sleepMinutes" INTEGER NOT NULL,
  "activeMinutes" INTEGER NOT NULL,
  "workoutsPerWeek" INTEGER NOT NULL,
  "distanceMeters" NOT NULL,
  "calories" INTEGER NOT NULL,
  "updatedAt" INTEGER NOT NULL,
  "intakeCalories",
  "intakeProteinG",
  "intakeCarbsG",
  "intakeFatG",
  "nutritionEnabled" INTEGER
);

-- table userProfiles on userProfiles
CREATE TABLE "userProfiles" (
  "id" TEXT NOT NULL,
  "name" TEXT,
  "age" INTEGER,
  "sex" TEXT,
  "heightCm",
  "weightKg",
  "unitsRaw" TEXT NOT NULL,
  "onboardingCompleted" INTEGER NOT NULL,
  "baselineCompleted" INTEGER NOT NULL,
  "athleteMode" INTEGER NOT NULL,
  "altitudeMeters",
  "usesBetaBlockers" INTEGER,
  "hasKnownLungCondition" INTEGER,
  "preferredGlucoseUnitRaw" TEXT NOT NULL,
  "hrZoneModeRaw" TEXT NOT NULL,
  "hrRestingBaseline",
  "hrRestingBaselineUpdatedAt" INTEGER,
  "hrCustomLowUpper",
  "hrCustomAthleticUpper",
  "hrCustomElevatedStart",
  "hrCustomHighStart",
  "createdAt" INTEGER NOT NULL,
  "updatedAt" INTEGER NOT NULL
);

-- table wearableLogs on wearableLogs
CREATE TABLE "wearableLogs" (
  "id" TEXT NOT NULL,
  "timestamp" INTEGER NOT NULL,
  "deviceTypeRaw" TEXT NOT NULL,
  "categoryRaw" TEXT NOT NULL,
  "levelRaw" TEXT NOT NULL,
  "message" TEXT NOT NULL,
  "metadataJSON" TEXT
);
